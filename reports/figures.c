/* figures.c: collects the report's figures from the database: devices, their
 * results grouped by problem, ceilings, comparisons, rankings, trajectories. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "figures.h"
#include "text.h"
#include "vendor.h"

const char *const rp_fail_statuses[RP_N_FAIL_STATUSES] = {
    DB_COMPILE_ERROR, DB_WRONG_RESULT, DB_LAUNCH_ERROR, DB_CRASHED, DB_TIMEOUT,
    DB_ABANDONED, DB_INVALID,
};

/* ---- reading stored values ---- */

/* 1 if a and b are the same problem: sizes, kind and batch (tpl_problem_equal). */
static int rp_same_problem(const tpl_problem *a, const tpl_problem *b)
{
    return tpl_problem_equal(a, b);
}

/* Seconds since the epoch of "2026-01-02T03:04:05.678Z"; -1 if unparsable. */
static double rp_time_of(const char *iso)
{
    int y, mo, d, h, mi;
    double s;
    if (sscanf(iso, "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    return (double)timegm(&tm) + s;
}

/* The value of NAME in "A=1,NAME=v,..." into val (cut to fit); 0 if absent,
 * val then untouched. */
static int rp_config_get(const char *config, const char *name, char *val, size_t len)
{
    size_t nl = strlen(name);
    const char *p = config;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t seg = end ? (size_t)(end - p) : strlen(p);
        if (seg > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t vl = seg - nl - 1;
            if (vl >= len)
                vl = len - 1;
            memcpy(val, p + nl + 1, vl);
            val[vl] = '\0';
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* 1 if two configurations are the same: compared parameter by parameter
 * where the family parses both, else as text. */
static int rp_same_config(const tpl_family *fam, const char *a, const char *b)
{
    if (fam) {
        int ca[TPL_MAX_PARAMS], cb[TPL_MAX_PARAMS];
        char err[256];
        if (tpl_config_parse(fam, a, ca, err, sizeof err) == AT_OK &&
            tpl_config_parse(fam, b, cb, err, sizeof err) == AT_OK)
            return memcmp(ca, cb, sizeof(int) * (size_t)fam->n_params) == 0;
    }
    return strcmp(a, b) == 0;
}

static int rp_is_ok(const db_result *r)
{
    return strcmp(r->status, DB_OK) == 0 && r->time_ms > 0;
}

/* GFLOP/s or GB/s of a run of problem p: the stored figure, else derived
 * from the family's work and the time; 0 if neither is known. */
static double rp_metric(const rp_group *g, const tpl_problem *p, double gflops, double gbs,
                        double time_ms)
{
    double v = g->is_flops ? gflops : gbs;
    if (v <= 0 && g->fam && g->fam->work && time_ms > 0) {
        double flops = 0, bytes = 0;
        g->fam->work(p, &flops, &bytes);
        v = (g->is_flops ? flops : bytes) / (time_ms * 1e6);
    }
    return v > 0 && isfinite(v) ? v : 0;
}

/* ---- the device ---- */

/* Dense tensor-core and FP64 throughput per SM and clock (flops), by
 * architecture, from NVIDIA's published peaks (A100: 312 BF16 TFLOP/s =
 * 108 SMs x 2048 x 1.41 GHz; H100/H200: 4096, TF32 half, FP64 tensor 128
 * and 256); 0 where this build has no figure. */
static void rp_tensor_rates(const at_device_info *i, double *f16, double *tf32, double *f64)
{
    *f16 = *tf32 = *f64 = 0;
    if (i->cc_major == 8 && i->cc_minor == 0) {
        *f16 = 2048;
        *tf32 = 1024;
        *f64 = 128;
    } else if (i->cc_major == 9 && i->cc_minor == 0) {
        *f16 = 4096;
        *tf32 = 2048;
        *f64 = 256;
    }
}

/* A theoretical ceiling of rate flops per SM and clock at the maximum clock. */
static rp_ceiling rp_theoretical(const at_device_info *i, double rate, const char *name)
{
    rp_ceiling c = { 0, "unknown", name, "" };
    if (rate > 0 && i->sm_count > 0 && i->clock_khz > 0) {
        c.value = (double)i->sm_count * rate * (double)i->clock_khz / 1e6;
        c.source = "theoretical";
        snprintf(c.note, sizeof c.note, "%d SMs x %.0f flop/clock x %d MHz (the maximum clock; "
                 "the datasheet's figure is lower)", i->sm_count, rate, i->clock_khz / 1000);
    } else if (rate <= 0) {
        snprintf(c.note, sizeof c.note, "no figure for sm_%d%d in this build", i->cc_major,
                 i->cc_minor);
    }
    return c;
}

/* The theoretical DRAM bandwidth: double data rate x bus width. */
static rp_ceiling rp_theoretical_bw(const at_device_info *i)
{
    rp_ceiling c = { 0, "unknown", "read bandwidth", "" };
    if (i->mem_clock_khz > 0 && i->mem_bus_bits > 0) {
        c.value = 2.0 * (double)i->mem_clock_khz * 1e3 * (double)i->mem_bus_bits / 8.0 / 1e9;
        c.source = "theoretical";
        snprintf(c.note, sizeof c.note, "2 x %d MHz x %d-bit bus", i->mem_clock_khz / 1000,
                 i->mem_bus_bits);
    }
    return c;
}

/* The device's ceilings: the stored device measurements (read bandwidth,
 * FP32 and FP64 FMA peaks, the launch floor, copy bandwidth), else the
 * theoretical figures from its facts; tensor-core peaks are theoretical. */
static void rp_ceilings(rp_device *rd)
{
    const at_device_info *i = &rd->dev.info;
    double f16, tf32, f64;
    rp_tensor_rates(i, &f16, &tf32, &f64);
    rd->fp32 = rp_theoretical(i, 256, "FP32");
    rd->bandwidth = rp_theoretical_bw(i);
    rd->tensor16 = rp_theoretical(i, f16, "BF16/FP16 tensor");
    rd->tf32 = rp_theoretical(i, tf32, "TF32 tensor");
    /* FP8 wgmma (sm_90): twice the 16-bit rate; no FP8 kernel runs elsewhere */
    rd->tensor8 = rp_theoretical(i, i->cc_major == 9 && i->cc_minor == 0 ? 2 * f16 : 0,
                                 "FP8 tensor");
    rd->fp64 = f64 > 0 ? rp_theoretical(i, f64, "FP64 tensor") : rp_theoretical(i, 0, "FP64");
    rd->copy = (rp_ceiling){ 0, "unknown", "copy bandwidth", "" };
    rd->floor_ms = 0;
    for (int k = 0; k < rd->n_ms; k++) {
        const db_measurement *m = &rd->ms[k];
        if (strcmp(m->kernel, "device") != 0)
            continue;
        rp_ceiling *c = NULL;
        double v = 0;
        if (strcmp(m->name, "fp32_peak") == 0)
            c = &rd->fp32, v = m->gflops;
        else if (strcmp(m->name, "read_bandwidth") == 0)
            c = &rd->bandwidth, v = m->gbs;
        else if (strcmp(m->name, "copy_bandwidth") == 0)
            c = &rd->copy, v = m->gbs;
        else if (strcmp(m->name, "fp64_peak") == 0 && f64 <= 0)
            c = &rd->fp64, v = m->gflops;
        else if (strcmp(m->name, "launch_floor") == 0 && m->time_ms > 0)
            rd->floor_ms = m->time_ms;
        if (c && v > 0) {
            c->value = v;
            c->source = "measured";
            snprintf(c->note, sizeof c->note, "%.199s", m->note);
        }
    }
}

/* The ceiling of g's metric and kind on rd. */
static rp_ceiling *rp_ceiling_of(const rp_device *rd_in, const rp_group *g)
{
    rp_device *rd = (rp_device *)rd_in;
    if (!g->is_flops)
        return &rd->bandwidth;
    if (tpl_math_fp8(g->problem.math))
        return &rd->tensor8;
    if (g->problem.dtype == AT_R_64F)
        return &rd->fp64;
    if (g->problem.dtype == AT_R_16F || g->problem.dtype == AT_R_16BF)
        return &rd->tensor16;
    return g->problem.math == AT_MATH_TF32 ? &rd->tf32 : &rd->fp32;
}

/* A measured ceiling that some best exceeds is wrong (it measured less
 * than the device does): it is replaced by the theoretical figure, with
 * a note naming the result that showed it. Never clamps. */
static void rp_ceilings_check(rp_device *rd)
{
    for (int k = 0; k < rd->n_groups; k++) {
        rp_group *g = &rd->groups[k];
        rp_ceiling *c = rp_ceiling_of(rd, g);
        if (strcmp(c->source, "measured") != 0 || g->best_value <= c->value ||
            (c != &rd->fp32 && c != &rd->bandwidth))
            continue;
        rp_ceiling t = g->is_flops ? rp_theoretical(&rd->dev.info, 256, "FP32")
                                   : rp_theoretical_bw(&rd->dev.info);
        if (t.value <= 0)
            continue;
        char prob[96];
        rp_problem_text(&g->problem, prob, sizeof prob);
        char how[sizeof t.note];
        snprintf(how, sizeof how, "%s", t.note);
        snprintf(t.note, sizeof t.note, "measured %.0f, below %.31s %.40s's %.0f; %.80s",
                 c->value, g->kernel, prob, g->best_value, how);
        *c = t;
    }
}

/* ---- grouping results by problem ---- */

static int rp_group_cmp(const void *pa, const void *pb)
{
    const rp_group *a = pa, *b = pb;
    int c = strcmp(a->kernel, b->kernel);
    if (c)
        return c;
    c = strcmp(a->hash, b->hash);
    if (c)
        return c;
    for (int i = 0; i < TPL_MAX_DIMS; i++) {
        long long x = i < a->problem.n_dims ? a->problem.dims[i] : 0;
        long long y = i < b->problem.n_dims ? b->problem.dims[i] : 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    char ta[128], tb[128];          /* same sizes: the plain kind first, then by suffix */
    tpl_problem_format(&a->problem, ta, sizeof ta);
    tpl_problem_format(&b->problem, tb, sizeof tb);
    return strcmp(ta, tb);
}

/* The group of r's (kernel, source hash, problem), added if new; NULL if
 * out of memory. */
static rp_group *rp_group_of(rp_device *rd, const db_result *r)
{
    for (int k = 0; k < rd->n_groups; k++) {
        rp_group *c = &rd->groups[k];
        if (strcmp(c->kernel, r->kernel) == 0 && strcmp(c->hash, r->source_hash) == 0 &&
            rp_same_problem(&c->problem, &r->problem))
            return c;
    }
    rp_group *ng = realloc(rd->groups, sizeof *ng * (size_t)(rd->n_groups + 1));
    if (!ng)
        return NULL;
    rd->groups = ng;
    rp_group *g = &rd->groups[rd->n_groups++];
    memset(g, 0, sizeof *g);
    snprintf(g->kernel, sizeof g->kernel, "%s", r->kernel);
    snprintf(g->hash, sizeof g->hash, "%s", r->source_hash);
    g->problem = r->problem;
    g->fam = tpl_find(r->kernel);
    g->best = -1;
    return g;
}

/* Appends r to g; 0 if out of memory. */
static int rp_add_entry(rp_group *g, const db_result *r)
{
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 32;
        rp_entry *p = realloc(g->e, sizeof *p * (size_t)cap);
        if (!p)
            return 0;
        g->e = p;
        g->cap = cap;
    }
    rp_entry *e = &g->e[g->n++];
    memset(e, 0, sizeof *e);
    e->r = r;
    e->ok = rp_is_ok(r);
    e->when = rp_time_of(r->created);
    e->kind = RP_KIND_OTHER;
    return 1;
}

/* The metric of a group, the value of each verified entry, the best (the
 * fastest verified, first stored among equals) and what each entry is. */
static void rp_group_values(rp_group *g)
{
    g->is_flops = 0;
    if (g->fam)
        g->is_flops = g->fam->metric_is_flops;
    else
        for (int j = 0; j < g->n; j++)
            if (g->e[j].r->gflops > 0)
                g->is_flops = 1;
    g->unit = g->is_flops ? "GFLOP/s" : "GB/s";
    for (int j = 0; j < g->n; j++) {
        rp_entry *e = &g->e[j];
        if (!e->ok)
            continue;
        g->n_ok++;
        e->value = rp_metric(g, &e->r->problem, e->r->gflops, e->r->gbs, e->r->time_ms);
        g->n_retimed += e->r->sustained_ms > 0;
        if (g->best < 0 || db_rank_ms(e->r) < db_rank_ms(g->e[g->best].r))
            g->best = j;                 /* the one ranking rule (db.h) */
    }
    g->best_value = g->best >= 0 ? g->e[g->best].value : 0;
    const db_result *best = g->best >= 0 ? g->e[g->best].r : NULL;
    g->best_sustained_value = best && best->sustained_ms > 0 && best->time_ms > 0 ?
        g->best_value * best->time_ms / best->sustained_ms : 0;   /* the metric goes as 1/time */
    const tpl_family *fam = g->fam;
    for (int j = 0; j < g->n; j++) {
        rp_entry *e = &g->e[j];
        if (!e->ok)
            continue;
        if (j == g->best)
            e->kind = RP_KIND_TUNED;
        else if (fam && fam->default_config &&
                 rp_same_config(fam, e->r->config, fam->default_config))
            e->kind = RP_KIND_DEFAULT;
        else if (fam)
            for (int q = 0; q < fam->n_baselines; q++)
                if (rp_same_config(fam, e->r->config, fam->baselines[q].config))
                    e->kind = RP_KIND_SEED;
    }
    g->hash_current = -1;
    const char *cur = fam ? tpl_source_hash(fam) : NULL;
    if (cur)
        g->hash_current = strcmp(cur, g->hash) == 0;
}

/* ---- the figures of one group ---- */

/* The entry of configuration cfg, -1 if not tried. */
static int rp_find_config(const rp_group *g, const char *cfg)
{
    for (int j = 0; j < g->n; j++)
        if (rp_same_config(g->fam, g->e[j].r->config, cfg))
            return j;
    return -1;
}

static void rp_add_bar(rp_compare *c, const char *label, double value, rp_kind kind,
                       const char *note)
{
    if (c->n >= RP_MAX_BARS)
        return;
    rp_bar *bar = &c->bars[c->n++];
    snprintf(bar->label, sizeof bar->label, "%s", label);
    bar->value = value;
    bar->kind = kind;
    snprintf(bar->note, sizeof bar->note, "%s", note ? note : "");
}

/* The measurements of the group's problem: vendor libraries and seeds. */
static void rp_compare_measured(const rp_device *rd, rp_group *g, rp_compare *c)
{
    char label[96];
    for (int k = 0; k < rd->n_ms; k++) {
        const db_measurement *m = &rd->ms[k];
        if (strcmp(m->kernel, g->kernel) != 0 || !rp_same_problem(&m->problem, &g->problem))
            continue;
        double v = m->time_ms > 0 ? rp_metric(g, &m->problem, m->gflops, m->gbs, m->time_ms) : 0;
        int seed = strncmp(m->name, "seed_", 5) == 0;
        snprintf(label, sizeof label, "%s%s", m->name, seed ? " (measured)" : "");
        char note[64];
        snprintf(note, sizeof note, "%.60s", v > 0 ? "" : m->note[0] ? m->note : "not measured");
        rp_add_bar(c, label, v, seed ? RP_KIND_SEED : RP_KIND_VENDOR, note);
        if (!seed && v <= 0 && !g->vendor_note[0])
            snprintf(g->vendor_note, sizeof g->vendor_note, "%.90s",
                     m->note[0] ? m->note : "not measured");
        if (seed && v > c->seed_best) {
            c->seed_best = v;
            snprintf(c->seed_name, sizeof c->seed_name, "%s", m->name);
        } else if (!seed && v > c->vendor_best) {
            c->vendor_best = v;
            snprintf(c->vendor_name, sizeof c->vendor_name, "%s", m->name);
        }
    }
}

/* The family's seed baselines and default, where they were tried. */
static void rp_compare_configs(rp_group *g, rp_compare *c)
{
    const tpl_family *fam = g->fam;
    for (int k = 0; fam && k < fam->n_baselines; k++) {
        const tpl_baseline *bl = &fam->baselines[k];
        int j = rp_find_config(g, bl->config);
        if (j < 0)
            continue;
        const rp_entry *e = &g->e[j];
        rp_add_bar(c, bl->name, e->value, RP_KIND_SEED, e->ok ? "" : e->r->status);
        if (e->value > c->seed_best) {
            c->seed_best = e->value;
            snprintf(c->seed_name, sizeof c->seed_name, "%s", bl->name);
        }
    }
    if (fam && fam->default_config) {
        int j = rp_find_config(g, fam->default_config);
        if (j >= 0) {
            const rp_entry *e = &g->e[j];
            c->default_value = e->value;
            rp_add_bar(c, "built-in default", e->value, RP_KIND_DEFAULT,
                       e->ok ? "" : e->r->status);
        }
    }
}

/* The best over a reference, 0 where either is unknown. */
static double rp_ratio_of(double best, double ref)
{
    return best > 0 && ref > 0 ? best / ref : 0;
}

/* The best against the launch floor: its time over an empty launch's, and
 * whether the work at the ceiling would take less than the floor (then
 * the percentage of the ceiling says nothing). */
static void rp_group_floor(const rp_device *rd, rp_group *g)
{
    g->floor_ratio = 0;
    g->latency_bound = 0;
    if (g->best < 0 || rd->floor_ms <= 0)
        return;
    g->floor_ratio = g->e[g->best].r->time_ms / rd->floor_ms;
    if (g->ceiling.value > 0 && g->best_value > 0) {
        double work_ms_at_ceiling = g->e[g->best].r->time_ms * g->best_value / g->ceiling.value;
        g->latency_bound = work_ms_at_ceiling < rd->floor_ms;
    }
}

/* Tuned vs vendor vs seeds vs default, the ceiling and the ratios. */
static void rp_group_compare(const rp_device *rd, rp_group *g)
{
    rp_compare *c = &g->cmp;
    memset(c, 0, sizeof *c);
    if (g->best >= 0)
        rp_add_bar(c, "tuned (best found)", g->best_value, RP_KIND_TUNED, "");
    rp_compare_measured(rd, g, c);
    rp_compare_configs(g, c);
    g->ceiling = *rp_ceiling_of(rd, g);
    g->ceiling_name = g->ceiling.name;
    g->pct = g->ceiling.value > 0 ? 100.0 * g->best_value / g->ceiling.value : 0;
    g->vs_default = rp_ratio_of(g->best_value, c->default_value);
    g->vs_seed = rp_ratio_of(g->best_value, c->seed_best);
    g->vs_vendor = rp_ratio_of(g->best_value, c->vendor_best);
    rp_group_floor(rd, g);
    if (g->vs_vendor > 0) {
        g->vendor_note[0] = '\0';
    } else if (!g->vendor_note[0]) {
        ms_vendor_call calls[MS_MAX_VENDOR];
        char why[256] = "not measured";
        if (!g->fam || ms_vendor_calls(g->fam, &g->problem, calls, MS_MAX_VENDOR, why,
                                       sizeof why) > 0)
            snprintf(why, sizeof why, "not measured");
        snprintf(g->vendor_note, sizeof g->vendor_note, "%.90s", why);
    }
}

typedef struct rp_rank {
    double value;
    rp_kind kind;
    int order;
} rp_rank;

/* Faster first; among equals, the one stored first. */
static int rp_rank_cmp(const void *pa, const void *pb)
{
    const rp_rank *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* Every verified value, fastest first; 0 if out of memory. */
static int rp_group_ranked(rp_group *g)
{
    size_t cap = (size_t)(g->n_ok ? g->n_ok : 1);
    rp_rank *rank = malloc(sizeof *rank * cap);
    g->ranked = malloc(sizeof *g->ranked * cap);
    g->ranked_kind = malloc(sizeof *g->ranked_kind * cap);
    if (!rank || !g->ranked || !g->ranked_kind) {
        free(rank);
        return 0;
    }
    int n = 0;
    for (int j = 0; j < g->n; j++)
        if (g->e[j].ok)
            rank[n++] = (rp_rank){ g->e[j].value, g->e[j].kind, j };
    qsort(rank, (size_t)n, sizeof *rank, rp_rank_cmp);
    for (int i = 0; i < n; i++) {
        g->ranked[i] = rank[i].value;
        g->ranked_kind[i] = rank[i].kind;
    }
    g->n_ranked = n;
    free(rank);
    return 1;
}

/* Results not ok, by status. */
static void rp_group_failures(rp_group *g)
{
    for (int j = 0; j < g->n; j++) {
        const rp_entry *e = &g->e[j];
        int known = 0;
        for (int s = 0; s < RP_N_FAIL_STATUSES; s++)
            if (strcmp(e->r->status, rp_fail_statuses[s]) == 0) {
                g->fails[s]++;
                known = 1;
            }
        if (!e->ok && !known)
            g->fails_other++;
    }
}

/* The newest sessions, when each began and how long and how high it went. */
static void rp_group_trajectory(rp_group *g)
{
    rp_trajectory *t = &g->traj;
    memset(t, 0, sizeof *t);
    for (int j = g->n - 1; j >= 0 && t->n_sessions < RP_MAX_SESSIONS; j--) {
        long long s = g->e[j].r->session_id;
        int seen = 0;
        for (int q = 0; q < t->n_sessions; q++)
            if (t->session[q] == s)
                seen = 1;
        if (!seen)
            t->session[t->n_sessions++] = s;
    }
    for (int q = 0; q < t->n_sessions; q++) {
        t->t0[q] = -1;
        for (int j = 0; j < g->n; j++) {
            const rp_entry *e = &g->e[j];
            if (e->r->session_id != t->session[q] || e->when < 0)
                continue;
            if (t->t0[q] < 0)
                t->t0[q] = e->when;
            if (e->when - t->t0[q] > t->tmax)
                t->tmax = e->when - t->t0[q];
            if (e->ok && e->value > t->vmax)
                t->vmax = e->value;
        }
    }
}

/* The group's parameter names into g->params, in family order or else in
 * order of first use in the stored configurations; returns their count. */
static int rp_param_names(rp_group *g)
{
    rp_param *ps = g->params;
    int n = 0;
    if (g->fam) {
        for (int i = 0; i < g->fam->n_params && n < TPL_MAX_PARAMS; i++)
            snprintf(ps[n++].name, sizeof ps[0].name, "%s", g->fam->params[i].name);
        return n;
    }
    for (int j = 0; j < g->n; j++) {
        const char *p = g->e[j].r->config;
        while (p && *p && n < TPL_MAX_PARAMS) {
            const char *eq = strchr(p, '='), *end = strchr(p, ',');
            if (!eq || (end && end < eq))
                break;
            char name[32];
            size_t l = (size_t)(eq - p) < sizeof name - 1 ? (size_t)(eq - p) : sizeof name - 1;
            memcpy(name, p, l);
            name[l] = '\0';
            int seen = 0;
            for (int q = 0; q < n; q++)
                if (strcmp(ps[q].name, name) == 0)
                    seen = 1;
            if (!seen)
                memcpy(ps[n++].name, name, l + 1);
            p = end ? end + 1 : NULL;
        }
    }
    return n;
}

/* Numeric order where both values are numbers, else text order. */
static int rp_pval_cmp(const void *pa, const void *pb)
{
    const rp_pval *a = pa, *b = pb;
    char *ea, *eb;
    double x = strtod(a->value, &ea), y = strtod(b->value, &eb);
    if (*ea == '\0' && *eb == '\0' && a->value[0] && b->value[0])
        return x < y ? -1 : x > y;
    return strcmp(a->value, b->value);
}

/* The values parameter p took (the first RP_MAX_PARAM_VALUES), how often
 * each was tried and the best verified value with it; 0 if out of memory. */
static int rp_param_values(const rp_group *g, rp_param *p)
{
    rp_pval vals[RP_MAX_PARAM_VALUES];
    int nv = 0;
    for (int j = 0; j < g->n; j++) {
        const rp_entry *e = &g->e[j];
        char v[32];
        if (!rp_config_get(e->r->config, p->name, v, sizeof v))
            continue;
        int k = 0;
        while (k < nv && strcmp(vals[k].value, v) != 0)
            k++;
        if (k == nv) {
            if (nv == RP_MAX_PARAM_VALUES)
                continue;
            memset(&vals[nv], 0, sizeof vals[nv]);
            snprintf(vals[nv].value, sizeof vals[nv].value, "%s", v);
            nv++;
        }
        vals[k].tried++;
        if (e->ok && e->value > vals[k].best)
            vals[k].best = e->value;
    }
    qsort(vals, (size_t)nv, sizeof vals[0], rp_pval_cmp);
    p->vals = malloc(sizeof *p->vals * (size_t)(nv ? nv : 1));
    if (!p->vals)
        return 0;
    memcpy(p->vals, vals, sizeof *p->vals * (size_t)nv);
    p->nv = nv;
    return 1;
}

/* Every parameter: its meaning, its value in the best configuration and
 * its sensitivity; 0 if out of memory. */
static int rp_group_params(rp_group *g)
{
    g->n_params = rp_param_names(g);
    for (int i = 0; i < g->n_params; i++) {
        rp_param *p = &g->params[i];
        if (g->fam && i < g->fam->n_params)
            p->meaning = g->fam->params[i].meaning;
        if (g->best >= 0)
            p->in_best = rp_config_get(g->e[g->best].r->config, p->name, p->best_value,
                                       sizeof p->best_value);
        if (!rp_param_values(g, p))
            return 0;
    }
    return 1;
}

/* The best's arithmetic intensity and GFLOP/s, and the best vendor
 * measurement's GFLOP/s on the same problem. */
static void rp_group_roof(const rp_device *rd, rp_group *g)
{
    rp_roof *rf = &g->roof;
    memset(rf, 0, sizeof *rf);
    if (g->best < 0 || !g->fam || !g->fam->work)
        return;
    double flops = 0, bytes = 0;
    g->fam->work(&g->problem, &flops, &bytes);
    const db_result *r = g->e[g->best].r;
    if (flops <= 0 || bytes <= 0 || r->time_ms <= 0)
        return;
    rf->valid = 1;
    rf->ai = flops / bytes;
    rf->gflops = flops / (r->time_ms * 1e6);
    for (int k = 0; k < rd->n_ms; k++) {
        const db_measurement *m = &rd->ms[k];
        if (strcmp(m->kernel, g->kernel) == 0 && strncmp(m->name, "seed_", 5) != 0 &&
            rp_same_problem(&m->problem, &g->problem) && m->time_ms > 0) {
            double vg = flops / (m->time_ms * 1e6);
            if (vg > rf->vendor_gflops)
                rf->vendor_gflops = vg;
        }
    }
}

/* Groups the device's results by (kernel, source hash, problem), sorted,
 * with every figure; 0 if out of memory. */
static int rp_build_groups(rp_device *rd)
{
    for (int i = 0; i < rd->n_res; i++) {
        rp_group *g = rp_group_of(rd, &rd->res[i]);
        if (!g || !rp_add_entry(g, &rd->res[i]))
            return 0;
    }
    for (int k = 0; k < rd->n_groups; k++)
        rp_group_values(&rd->groups[k]);
    if (rd->n_groups > 1)
        qsort(rd->groups, (size_t)rd->n_groups, sizeof *rd->groups, rp_group_cmp);
    rp_ceilings_check(rd);
    for (int k = 0; k < rd->n_groups; k++) {
        rp_group *g = &rd->groups[k];
        rp_group_compare(rd, g);
        rp_group_failures(g);
        rp_group_trajectory(g);
        rp_group_roof(rd, g);
        if (!rp_group_ranked(g) || !rp_group_params(g))
            return 0;
    }
    return 1;
}

/* Loads what is stored for rd->dev and computes its figures. */
static at_status rp_load_device(db *d, rp_device *rd, char *err, size_t errlen)
{
    at_status s;
    if ((s = db_results(d, rd->dev.info.uuid, NULL, &rd->res, &rd->n_res)) != AT_OK ||
        (s = db_measurements(d, rd->dev.info.uuid, NULL, &rd->ms, &rd->n_ms)) != AT_OK) {
        snprintf(err, errlen, "%s", db_errmsg(d));
        return s;
    }
    rp_ceilings(rd);
    if (!rp_build_groups(rd)) {
        snprintf(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    return AT_OK;
}

at_status rp_collect(db *d, const char *device_uuid, rp_report *out, char *err,
                     size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    memset(out, 0, sizeof *out);
    db_device *list = NULL;
    int n_list = 0;
    at_status s = db_list_devices(d, &list, &n_list);
    if (s != AT_OK) {
        snprintf(err, errlen, "%s", db_errmsg(d));
        return s;
    }
    out->devs = calloc((size_t)(n_list ? n_list : 1), sizeof *out->devs);
    if (!out->devs) {
        free(list);
        snprintf(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    for (int i = 0; i < n_list; i++) {
        if (device_uuid && strcmp(list[i].info.uuid, device_uuid) != 0)
            continue;
        rp_device *rd = &out->devs[out->n_devs++];
        rd->dev = list[i];
        if ((s = rp_load_device(d, rd, err, errlen)) != AT_OK) {
            free(list);
            rp_report_free(out);
            return s;
        }
        out->total += rd->n_res;
    }
    free(list);
    return AT_OK;
}

void rp_report_free(rp_report *rep)
{
    for (int i = 0; i < rep->n_devs; i++) {
        rp_device *rd = &rep->devs[i];
        for (int k = 0; k < rd->n_groups; k++) {
            rp_group *g = &rd->groups[k];
            for (int p = 0; p < g->n_params; p++)
                free(g->params[p].vals);
            free(g->e);
            free(g->ranked);
            free(g->ranked_kind);
        }
        free(rd->groups);
        free(rd->res);
        free(rd->ms);
    }
    free(rep->devs);
    memset(rep, 0, sizeof *rep);
}
