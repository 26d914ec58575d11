/* overview.c: the report's first screen in figures: each tuned problem's
 * kind (operation, type, batched, op pair), a row per kind with its speed
 * against the vendor library and the roofline, the coverage of each kind
 * this build computes, and the order of what users run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "overview.h"
#include "text.h"

/* The operation a kernel computes, in the order rows are shown. */
enum { RP_OP_GEMM, RP_OP_SUM, RP_OP_DOT, RP_OP_JACOBI, RP_OP_OTHER };

/* What a row stands for. */
typedef struct rp_kindkey {
    int op;
    char other[32];                 /* the kernel's name for RP_OP_OTHER */
    tpl_problem kind;               /* dtype, math, ops, order; batch 0 or 2; no sizes */
} rp_kindkey;

static int rp_op_of(const char *kernel)
{
    static const struct { const char *name; int op; } ops[] = {
        { "tcgemm", RP_OP_GEMM }, { "matmul", RP_OP_GEMM }, { "dgemm", RP_OP_GEMM },
        { "bgemm", RP_OP_GEMM }, { "sum", RP_OP_SUM }, { "dot", RP_OP_DOT },
        { "jacobi", RP_OP_JACOBI },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(kernel, ops[i].name) == 0)
            return ops[i].op;
    return RP_OP_OTHER;
}

static rp_kindkey rp_key_of(const rp_group *g)
{
    rp_kindkey k;
    memset(&k, 0, sizeof k);
    k.op = rp_op_of(g->kernel);
    if (k.op == RP_OP_OTHER)
        snprintf(k.other, sizeof k.other, "%s", g->kernel);
    k.kind = g->problem;
    k.kind.n_dims = 0;
    memset(k.kind.dims, 0, sizeof k.kind.dims);
    k.kind.batch = tpl_problem_batch(&g->problem) > 1 ? 2 : 0;
    return k;
}

/* 1 if a and b are one series: the same operation, type, math, batching and fused epilogue. */
static int rp_same_series(const rp_kindkey *a, const rp_kindkey *b)
{
    return a->op == b->op && strcmp(a->other, b->other) == 0 &&
           a->kind.dtype == b->kind.dtype && a->kind.math == b->kind.math &&
           a->kind.batch == b->kind.batch && a->kind.epilogue == b->kind.epilogue;
}

static int rp_same_row(const rp_kindkey *a, const rp_kindkey *b)
{
    return rp_same_series(a, b) && a->kind.op_a == b->kind.op_a &&
           a->kind.op_b == b->kind.op_b && a->kind.order == b->kind.order;
}

/* The C types of an FP8 product, in the order of rp_fp8_names' columns. */
static int rp_fp8_c(at_dtype t)
{
    return t == AT_R_16BF ? 0 : t == AT_R_16F ? 1 : t == AT_R_32F ? 2 : -1;
}

/* "BF16", "TF32", "FP32", "FP8 e4m3xe4m3->BF16", ...; "?" for a type this build has no name
 * for. */
static const char *rp_type_name(const tpl_problem *k)
{
    static const char *const rp_fp8_names[3][3] = {
        {"FP8 e4m3xe4m3->BF16", "FP8 e4m3xe4m3->FP16", "FP8 e4m3xe4m3->FP32"},
        {"FP8 e4m3xe5m2->BF16", "FP8 e4m3xe5m2->FP16", "FP8 e4m3xe5m2->FP32"},
        {"FP8 e5m2xe4m3->BF16", "FP8 e5m2xe4m3->FP16", "FP8 e5m2xe4m3->FP32"},
    };
    int fp8 = tpl_math_fp8(k->math), c = rp_fp8_c(k->dtype);
    if (fp8)
        return c >= 0 ? rp_fp8_names[fp8 - 1][c] : "?";
    if (k->dtype == AT_R_32F)
        return k->math == AT_MATH_TF32 ? "TF32" : k->math == AT_MATH_DEFAULT ? "FP32" : "?";
    switch (k->dtype) {
    case AT_R_16BF: return "BF16";
    case AT_R_16F: return "FP16";
    case AT_R_64F: return "FP64";
    default: return "?";
    }
}

/* Where a type stands: GEMM users run BF16, FP16, TF32, FP32, FP64 in that
 * order of volume, then the FP8 kinds (by pair, then C's type); reductions and solvers FP32
 * before FP64. */
static int rp_type_rank(const tpl_problem *k, int op)
{
    int fp8 = tpl_math_fp8(k->math), c = rp_fp8_c(k->dtype);
    if (fp8)
        return 5 + (fp8 - 1) * 3 + (c >= 0 ? c : 3);
    static const char *const gemm[] = { "BF16", "FP16", "TF32", "FP32", "FP64" };
    static const char *const other[] = { "FP32", "FP64", "BF16", "FP16", "TF32" };
    const char *const *list = op == RP_OP_GEMM ? gemm : other;
    const char *t = rp_type_name(k);
    for (int i = 0; i < 5; i++)
        if (strcmp(t, list[i]) == 0)
            return i;
    return 5;
}

static long long rp_rank_of(const rp_kindkey *k)
{
    long long ops = k->kind.op_a * 2 + k->kind.op_b, col = k->kind.order != AT_ROW_MAJOR;
    long long layout = (ops & 3) * 2 + col, batched = k->kind.batch > 1;
    long long type = rp_type_rank(&k->kind, k->op);
    long long epi = k->kind.epilogue >= 0 && k->kind.epilogue < TPL_N_EPI ? k->kind.epilogue : 11;
    return (long long)k->op * 100000 + batched * 10000 + type * 100 + epi * 8 + layout;
}

/* "NT", "TN col-major"; "" for NN row-major. */
static void rp_layout_text(const tpl_problem *k, char *out, size_t len)
{
    int ops = k->op_a != AT_OP_N || k->op_b != AT_OP_N, col = k->order != AT_ROW_MAJOR;
    const char *a = tpl_op_name(k->op_a), *b = tpl_op_name(k->op_b);
    snprintf(out, len, "%s%s%s%s", ops ? (a ? a : "?") : "", ops ? (b ? b : "?") : "",
             ops && col ? " " : "", col ? "col-major" : "");
}

/* The series' name ("batched FP64 GEMM", "FP32 sum", "mykernel:f64", "BF16 GEMM+bias_col:gelu"). */
static void rp_series_text(const rp_kindkey *k, char *out, size_t len)
{
    static const char *const op_names[] = { "GEMM", "sum", "dot", "Jacobi" };
    const char *batched = k->kind.batch > 1 ? "batched " : "";
    if (k->op == RP_OP_OTHER) {
        char kind[64] = "";
        tpl_problem plain = k->kind;
        plain.op_a = plain.op_b = AT_OP_N;
        plain.order = AT_ROW_MAJOR;
        plain.batch = 0;
        tpl_problem_format(&plain, kind, sizeof kind);
        snprintf(out, len, "%s%.31s%s", batched, k->other, kind);
        return;
    }
    const char *epi = k->kind.epilogue ? tpl_epilogue_name(k->kind.epilogue) : "";
    snprintf(out, len, "%s%s %s%s%s", batched, rp_type_name(&k->kind), op_names[k->op],
             k->kind.epilogue ? "+" : "", epi ? epi : "?");
}

static void rp_row_text(const rp_kindkey *k, char *out, size_t len)
{
    char series[40], layout[20];
    rp_series_text(k, series, sizeof series);
    rp_layout_text(&k->kind, layout, sizeof layout);
    snprintf(out, len, "%.39s%s%.19s", series, layout[0] ? " " : "", layout);
}

double rp_size_of(const tpl_problem *p)
{
    double v = 1;
    for (int i = 0; i < p->n_dims && i < TPL_MAX_DIMS; i++)
        v *= (double)p->dims[i];
    return v * (double)tpl_problem_batch(p);
}

void rp_dims_text(const tpl_problem *p, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < p->n_dims && i < TPL_MAX_DIMS && n < len; i++) {
        int w = snprintf(out + n, len - n, "%s%lld", i ? "x" : "", p->dims[i]);
        if (w < 0)
            return;
        n += (size_t)w;
    }
    if (tpl_problem_batch(p) > 1 && n < len)
        snprintf(out + n, len - n, ", batch %lld", p->batch);
    if (!out[0])
        snprintf(out, len, "-");
}

double rp_roof_pct(const rp_device *rd, const rp_group *g)
{
    if (g->best < 0 || g->best_value <= 0 || g->ceiling.value <= 0)
        return 0;
    double bound = g->ceiling.value;
    if (g->is_flops && g->roof.valid && rd->bandwidth.value > 0)
        bound = fmin(bound, g->roof.ai * rd->bandwidth.value);
    return bound > 0 ? 100.0 * g->best_value / bound : 0;
}

/* ---- the rows ---- */

/* The row of key k, added (with its series) if new; NULL if the table is full. */
static rp_kindrow *rp_row_for(rp_overview *ov, rp_kindkey *keys, const rp_kindkey *k)
{
    for (int r = 0; r < ov->n_rows; r++)
        if (rp_same_row(&keys[r], k))
            return &ov->rows[r];
    if (ov->n_rows == RP_MAX_ROWS)
        return NULL;
    int r = ov->n_rows++;
    keys[r] = *k;
    rp_kindrow *row = &ov->rows[r];
    memset(row, 0, sizeof *row);
    rp_row_text(k, row->label, sizeof row->label);
    row->rank = rp_rank_of(k);
    row->vendor_min_group = row->roof_group = -1;
    row->series = -1;
    for (int q = 0; q < r; q++)
        if (rp_same_series(&keys[q], k))
            row->series = ov->rows[q].series;
    if (row->series < 0) {
        row->series = ov->n_series++;
        rp_series_text(k, ov->series_label[row->series], sizeof ov->series_label[0]);
    }
    return row;
}

/* Adds group j of rd to its row. */
static void rp_row_add(const rp_device *rd, int j, rp_kindrow *row, double *log_sum)
{
    const rp_group *g = &rd->groups[j];
    if (!strstr(row->kernels, g->kernel)) {
        size_t n = strlen(row->kernels);
        snprintf(row->kernels + n, sizeof row->kernels - n, "%s%.31s", n ? ", " : "", g->kernel);
    }
    if (g->best < 0) {
        row->n_failed++;
        return;
    }
    row->n_tuned++;
    if (g->vs_vendor > 0) {
        row->n_vendor++;
        *log_sum += log(g->vs_vendor);
        if (row->vendor_min_group < 0 || g->vs_vendor < row->vendor_min) {
            row->vendor_min = g->vs_vendor;
            row->vendor_min_group = j;
        }
    }
    if (g->latency_bound) {
        row->n_latency++;
        if (g->floor_ratio > 0 && (row->floor_ratio == 0 || g->floor_ratio < row->floor_ratio))
            row->floor_ratio = g->floor_ratio;
        return;
    }
    double pct = rp_roof_pct(rd, g);
    if (pct > row->roof_pct) {
        row->roof_pct = pct;
        row->roof_group = j;
    }
}

/* 1 if a family of this build (not a test-only one) computes kind k of n dims. */
static int rp_computed(int op, const tpl_problem *k, int n_dims)
{
    tpl_problem p = *k;
    p.n_dims = n_dims;
    for (int i = 0; i < n_dims; i++)
        p.dims[i] = n_dims == 3 ? 256 : 4096;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        if (fam && !fam->hidden && rp_op_of(fam->name) == op && fam->n_dims == n_dims &&
            tpl_family_accepts(fam, &p))
            return 1;
    }
    return 0;
}

/* The kinds a user runs most, shown as untuned rows where nothing is stored. */
static void rp_untuned_rows(rp_overview *ov, rp_kindkey *keys)
{
    static const struct { int op; at_dtype t; at_math m; int batched; } cat[] = {
        { RP_OP_GEMM, AT_R_16BF, AT_MATH_DEFAULT, 0 }, { RP_OP_GEMM, AT_R_16F, AT_MATH_DEFAULT, 0 },
        { RP_OP_GEMM, AT_R_32F, AT_MATH_TF32, 0 },     { RP_OP_GEMM, AT_R_32F, AT_MATH_DEFAULT, 0 },
        { RP_OP_GEMM, AT_R_64F, AT_MATH_DEFAULT, 0 },  { RP_OP_GEMM, AT_R_32F, AT_MATH_DEFAULT, 1 },
        { RP_OP_GEMM, AT_R_64F, AT_MATH_DEFAULT, 1 },  { RP_OP_SUM, AT_R_32F, AT_MATH_DEFAULT, 0 },
        { RP_OP_SUM, AT_R_64F, AT_MATH_DEFAULT, 0 },   { RP_OP_DOT, AT_R_32F, AT_MATH_DEFAULT, 0 },
        { RP_OP_DOT, AT_R_64F, AT_MATH_DEFAULT, 0 },   { RP_OP_JACOBI, AT_R_32F, AT_MATH_DEFAULT, 0 },
        { RP_OP_JACOBI, AT_R_64F, AT_MATH_DEFAULT, 0 },
    };
    for (size_t i = 0; i < sizeof cat / sizeof cat[0]; i++) {
        rp_kindkey k;
        memset(&k, 0, sizeof k);
        k.op = cat[i].op;
        k.kind.dtype = cat[i].t;
        k.kind.math = cat[i].m;
        k.kind.batch = cat[i].batched ? 2 : 0;
        int seen = 0;
        for (int r = 0; r < ov->n_rows; r++)
            seen |= rp_same_series(&keys[r], &k);
        if (seen || !rp_computed(k.op, &k.kind, k.op == RP_OP_GEMM ? 3 : 1))
            continue;
        rp_kindrow *row = rp_row_for(ov, keys, &k);
        if (row)
            row->untuned = 1;
    }
}

/* Coverage of series s: the op pairs tuned and those only the defaults
 * serve (GEMM), else the range of sizes tuned. */
static void rp_series_coverage(const rp_device *rd, rp_overview *ov, const rp_kindkey *keys,
                               int s, char *out, size_t len)
{
    int first = -1, tuned = 0;
    for (int r = 0; r < ov->n_rows; r++)
        if (ov->rows[r].series == s) {
            if (first < 0)
                first = r;
            tuned += ov->rows[r].n_tuned;
        }
    out[0] = '\0';
    if (first < 0)
        return;
    const rp_kindkey *k = &keys[first];
    if (tuned == 0) {
        snprintf(out, len, "nothing tuned: built-in defaults serve every call");
        return;
    }
    if (k->op == RP_OP_GEMM) {
        char yes[96] = "", no[96] = "", name[32];
        for (int r = 0; r < ov->n_rows; r++)       /* layouts tuned, in row order */
            if (ov->rows[r].series == s && ov->rows[r].n_tuned > 0) {
                rp_layout_text(&keys[r].kind, name, sizeof name);
                size_t n = strlen(yes);
                snprintf(yes + n, sizeof yes - n, "%s%s", n ? ", " : "", name[0] ? name : "NN");
            }
        for (int ops = 0; ops < 4; ops++) {         /* op pairs computed, none tuned */
            rp_kindkey q = *k;
            q.kind.op_a = (at_op)(ops >> 1);
            q.kind.op_b = (at_op)(ops & 1);
            q.kind.order = AT_ROW_MAJOR;
            int stored = 0;
            for (int r = 0; r < ov->n_rows; r++)
                stored |= ov->rows[r].series == s && ov->rows[r].n_tuned > 0 &&
                          rp_same_row(&keys[r], &q);
            if (stored || !rp_computed(k->op, &q.kind, 3))
                continue;
            rp_layout_text(&q.kind, name, sizeof name);
            size_t n = strlen(no);
            snprintf(no + n, sizeof no - n, "%s%s", n ? ", " : "", name[0] ? name : "NN");
        }
        snprintf(out, len, "tuned: %s%s%s", yes, no[0] ? "; defaults only: " : "", no);
        return;
    }
    int lo = -1, hi = -1;
    for (int j = 0; j < rd->n_groups; j++) {
        const rp_group *g = &rd->groups[j];
        if (ov->row_of[j] < 0 || ov->rows[ov->row_of[j]].series != s || g->best < 0)
            continue;
        double v = rp_size_of(&g->problem);
        if (lo < 0 || v < rp_size_of(&rd->groups[lo].problem))
            lo = j;
        if (hi < 0 || v > rp_size_of(&rd->groups[hi].problem))
            hi = j;
    }
    char a[64], b[64];
    rp_dims_text(&rd->groups[lo].problem, a, sizeof a);
    rp_dims_text(&rd->groups[hi].problem, b, sizeof b);
    if (lo == hi)
        snprintf(out, len, "size %s", a);
    else
        snprintf(out, len, "sizes %s to %s", a, b);
}

/* ---- the display order ---- */

typedef struct rp_place {
    long long rank;
    const char *label;
    double size;
    const char *kernel;
    int j;
} rp_place;

/* Kinds in the order of what users run; within one, larger problems first. */
static int rp_place_cmp(const void *pa, const void *pb)
{
    const rp_place *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    int c = strcmp(a->label, b->label);
    if (c)
        return c;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if ((c = strcmp(a->kernel, b->kernel)))
        return c;
    return (a->j > b->j) - (a->j < b->j);
}

/* A row and where it stood before sorting. */
typedef struct rp_tagged {
    rp_kindrow row;
    int old;
} rp_tagged;

static int rp_tagged_cmp(const void *pa, const void *pb)
{
    const rp_kindrow *a = &((const rp_tagged *)pa)->row, *b = &((const rp_tagged *)pb)->row;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return strcmp(a->label, b->label);
}

int rp_overview_build(const rp_device *rd, rp_overview *ov)
{
    memset(ov, 0, sizeof *ov);
    size_t n = (size_t)(rd->n_groups ? rd->n_groups : 1);
    rp_kindkey *keys = calloc(RP_MAX_ROWS, sizeof *keys);
    rp_place *places = calloc(n, sizeof *places);
    ov->order = calloc(n, sizeof *ov->order);
    ov->row_of = calloc(n, sizeof *ov->row_of);
    double *log_sum = calloc(RP_MAX_ROWS, sizeof *log_sum);
    if (!keys || !places || !ov->order || !ov->row_of || !log_sum) {
        free(keys);
        free(places);
        free(log_sum);
        rp_overview_free(ov);
        return 0;
    }
    for (int j = 0; j < rd->n_groups; j++) {
        rp_kindkey k = rp_key_of(&rd->groups[j]);
        rp_kindrow *row = rp_row_for(ov, keys, &k);
        ov->row_of[j] = row ? (int)(row - ov->rows) : -1;
        if (row)
            rp_row_add(rd, j, row, &log_sum[row - ov->rows]);
    }
    if (rd->n_groups > 0)
        rp_untuned_rows(ov, keys);
    for (int r = 0; r < ov->n_rows; r++)
        if (ov->rows[r].n_vendor > 0)
            ov->rows[r].vendor_geomean = exp(log_sum[r] / ov->rows[r].n_vendor);
    for (int s = 0; s < ov->n_series; s++)
        rp_series_coverage(rd, ov, keys, s, ov->coverage[s], sizeof ov->coverage[0]);
    /* the groups in display order, then the rows sorted (row_of follows) */
    for (int j = 0; j < rd->n_groups; j++) {
        int r = ov->row_of[j];
        places[j] = (rp_place){ r >= 0 ? ov->rows[r].rank : (1LL << 60),
                                r >= 0 ? ov->rows[r].label : "", rp_size_of(&rd->groups[j].problem),
                                rd->groups[j].kernel, j };
    }
    qsort(places, (size_t)rd->n_groups, sizeof *places, rp_place_cmp);
    for (int j = 0; j < rd->n_groups; j++)
        ov->order[j] = places[j].j;
    rp_tagged sorted[RP_MAX_ROWS];
    int to[RP_MAX_ROWS];
    for (int r = 0; r < ov->n_rows; r++)
        sorted[r] = (rp_tagged){ ov->rows[r], r };
    qsort(sorted, (size_t)ov->n_rows, sizeof sorted[0], rp_tagged_cmp);
    for (int r = 0; r < ov->n_rows; r++) {
        to[sorted[r].old] = r;
        ov->rows[r] = sorted[r].row;
    }
    for (int j = 0; j < rd->n_groups; j++)
        if (ov->row_of[j] >= 0)
            ov->row_of[j] = to[ov->row_of[j]];
    free(keys);
    free(places);
    free(log_sum);
    return 1;
}

void rp_overview_free(rp_overview *ov)
{
    free(ov->order);
    free(ov->row_of);
    ov->order = ov->row_of = NULL;
    ov->n_rows = ov->n_series = 0;
}
