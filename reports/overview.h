/* overview.h: the report's first screen in figures: per device a row per
 * family and kind (problems tuned, speed against the vendor library and the
 * roofline, coverage), and the order in which kinds and problems are shown. */
#ifndef RP_OVERVIEW_H
#define RP_OVERVIEW_H

#include "figures.h"

#define RP_MAX_ROWS 64

/* One row of the first screen's table: the tuned problems of one kind
 * (operation, element type, math, batched or not, op pair, order). */
typedef struct rp_kindrow {
    char label[64];                 /* "BF16 GEMM", "FP32 GEMM NT", "batched FP64 GEMM",
                                       "FP32 sum", or an unknown kernel's name */
    char kernels[64];               /* the kernels that tuned it, "tcgemm" */
    long long rank;                 /* the order of what users run, smaller first */
    int series;                     /* index of its kind without op pair and order
                                       (rows of one series share coverage and colour) */
    int n_tuned;                    /* problems with a verified best */
    int n_failed;                   /* problems tried with none verified */
    int n_vendor;                   /* problems with a vendor ratio */
    double vendor_geomean;          /* geometric mean of best / vendor, 0 if none */
    double vendor_min;              /* the lowest best / vendor, 0 if none */
    int vendor_min_group;           /* its group (index into rd->groups), -1 if none */
    double roof_pct;                /* the highest share of the roofline reached by a
                                       problem that is not latency-bound, 0 if none */
    int roof_group;                 /* its group, -1 if none */
    int n_latency;                  /* latency-bound problems */
    double floor_ratio;             /* the lowest best time over the launch floor
                                       among them, 0 if none */
    int untuned;                    /* 1: this build computes the kind, nothing is stored:
                                       the built-in defaults serve every call */
} rp_kindrow;

/* The rows of one device, in order, and its groups in display order. */
typedef struct rp_overview {
    rp_kindrow rows[RP_MAX_ROWS];
    int n_rows;
    char series_label[RP_MAX_ROWS][64];   /* each series' name ("BF16 GEMM") */
    char coverage[RP_MAX_ROWS][200];      /* each series' coverage, text */
    int n_series;
    int *order;                     /* group indexes in display order (n_groups) */
    int *row_of;                    /* each group's row, -1 if it has none */
} rp_overview;

/* Fills ov from the figures of rd (every group lands in one row; kinds this
 * build computes with nothing stored get a row marked untuned). 0 if out of
 * memory (ov then empty). rp_overview_free releases it. */
int rp_overview_build(const rp_device *rd, rp_overview *ov);
void rp_overview_free(rp_overview *ov);

/* The share (percent) of the roofline g's best reached: the ceiling of its
 * kind, or for a GFLOP/s problem of low arithmetic intensity the read
 * bandwidth times its intensity, whichever is lower; 0 if unknown. */
double rp_roof_pct(const rp_device *rd, const rp_group *g);

/* The sizes of p without its kind: "4096x4096x4096", "16x16x16, batch 16384". */
void rp_dims_text(const tpl_problem *p, char *out, size_t len);

/* A problem's size on a chart: the product of its dimensions and batch. */
double rp_size_of(const tpl_problem *p);

#endif
