/* calls.c: the random-calls benchmark in the report. bench_calls --tsv files come from
 * outside the database (often from another machine): they are read as data, strictly (named
 * columns, finite positive numbers, known types), every string escaped on its way out. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "calls.h"
#include "svg.h"

#define RP_CALLS_MAX_BYTES (64L << 20)

static const char *const rp_call_types[] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
static const char *const rp_call_colors[] = {"#2563eb", "#16a34a", "#d97706", "#dc2626",
                                             "#7c3aed"};
#define RP_N_TYPES 5

static int rp_type_index(const char *t)
{
    for (int i = 0; i < RP_N_TYPES; i++)
        if (strcmp(t, rp_call_types[i]) == 0)
            return i;
    return -1;
}

void rp_calls_free(rp_calls *c)
{
    free(c->call);
    memset(c, 0, sizeof *c);
}

/* Splits line (modified) at tabs into at most max fields; the count. */
static int rp_split_tabs(char *line, char **field, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        field[n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* A finite positive number filling the whole field, else -1. */
static double rp_positive(const char *s)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno || !isfinite(v) || v <= 0)
        return -1;
    return v;
}

/* The whole file into a NUL-terminated buffer (malloc'd), or NULL with err set. */
static char *rp_slurp(const char *path, char *err, size_t errlen, at_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        *st = AT_ERR_IO;
        return NULL;
    }
    char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        size <= RP_CALLS_MAX_BYTES && (buf = malloc((size_t)size + 1)) != NULL &&
        fread(buf, 1, (size_t)size, f) == (size_t)size) {
        buf[size] = '\0';
        fclose(f);
        if (memchr(buf, '\0', (size_t)size)) {
            snprintf(err, errlen, "%s: not a text file (a NUL byte)", path);
            free(buf);
            *st = AT_ERR_INVALID_ARG;
            return NULL;
        }
        return buf;
    }
    fclose(f);
    free(buf);
    if (size > RP_CALLS_MAX_BYTES) {
        snprintf(err, errlen, "%s: over %ld MiB, not a bench_calls table", path,
                 RP_CALLS_MAX_BYTES >> 20);
        *st = AT_ERR_INVALID_ARG;
    } else {
        snprintf(err, errlen, "cannot read %s", path);
        *st = AT_ERR_IO;
    }
    return NULL;
}

enum { RC_TYPE, RC_CUBLAS, RC_RATIO, RC_VENDOR, RC_CALL, RC_N };
static const char *const rp_call_columns[RC_N] = {"type", "cublas_us", "ratio", "vendor",
                                                  "call"};

/* One data row into call; 0, or -1 with the reason in why. */
static int rp_call_row(char **field, int nf, const int *col, rp_call *call, char *why,
                       size_t len)
{
    for (int k = 0; k < RC_N; k++)
        if (col[k] >= nf) {
            snprintf(why, len, "%d fields, the header names %s as field %d", nf,
                     rp_call_columns[k], col[k] + 1);
            return -1;
        }
    const char *type = field[col[RC_TYPE]], *vendor = field[col[RC_VENDOR]];
    if (rp_type_index(type) < 0) {
        snprintf(why, len, "type \"%.16s\" is none of bf16, fp16, tf32, fp32, fp64", type);
        return -1;
    }
    snprintf(call->type, sizeof call->type, "%s", type);
    call->cublas_us = rp_positive(field[col[RC_CUBLAS]]);
    call->ratio = rp_positive(field[col[RC_RATIO]]);
    if (call->cublas_us < 0 || call->ratio < 0) {
        snprintf(why, len, "cublas_us \"%.24s\" and ratio \"%.24s\" must be finite positive "
                 "numbers", field[col[RC_CUBLAS]], field[col[RC_RATIO]]);
        return -1;
    }
    if (strcmp(vendor, "0") != 0 && strcmp(vendor, "1") != 0) {
        snprintf(why, len, "vendor \"%.16s\" is neither 0 nor 1", vendor);
        return -1;
    }
    call->vendor = vendor[0] == '1';
    const char *shape = field[col[RC_CALL]];
    size_t n = strcspn(shape, "\r");
    snprintf(call->shape, sizeof call->shape, "%.*s", (int)(n < 95 ? n : 95), shape);
    return 0;
}

at_status rp_calls_read(const char *path, rp_calls *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    err[0] = '\0';
    if (!path || !*path) {
        snprintf(err, errlen, "no file name for the random calls");
        return AT_ERR_INVALID_ARG;
    }
    at_status st = AT_OK;
    char *text = rp_slurp(path, err, errlen, &st);
    if (!text)
        return st;
    const char *base = strrchr(path, '/');
    snprintf(c->label, sizeof c->label, "%s", base ? base + 1 : path);
    int col[RC_N], have_header = 0, line_no = 0;
    char why[256] = "";
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        line[strcspn(line, "\r")] = '\0';
        if (!*line || line[0] == '#')
            continue;
        char *field[64];
        int nf = rp_split_tabs(line, field, 64);
        if (!have_header) {
            for (int k = 0; k < RC_N; k++) {
                col[k] = -1;
                for (int i = 0; i < nf && col[k] < 0; i++)
                    if (strcmp(field[i], rp_call_columns[k]) == 0)
                        col[k] = i;
                if (col[k] < 0) {
                    snprintf(why, sizeof why, "the header has no column \"%s\" (bench_calls "
                             "--tsv writes type, cublas_us, ratio, vendor and call)",
                             rp_call_columns[k]);
                    goto bad;
                }
            }
            have_header = 1;
            continue;
        }
        if (c->n == RP_CALLS_MAX_ROWS) {
            snprintf(why, sizeof why, "more than %d calls", RP_CALLS_MAX_ROWS);
            goto bad;
        }
        if (c->n % 256 == 0) {
            rp_call *more = realloc(c->call, (size_t)(c->n + 256) * sizeof *more);
            if (!more) {
                snprintf(err, errlen, "%s: out of memory", path);
                free(text);
                rp_calls_free(c);
                return AT_ERR_NO_MEMORY;
            }
            c->call = more;
        }
        if (rp_call_row(field, nf, col, &c->call[c->n], why, sizeof why) != 0)
            goto bad;
        c->n++;
    }
    free(text);
    if (!have_header || c->n == 0) {
        snprintf(err, errlen, "%s: %s", path, have_header ? "no calls" : "no header line");
        rp_calls_free(c);
        return AT_ERR_INVALID_ARG;
    }
    return AT_OK;
bad:
    snprintf(err, errlen, "%s line %d: %s", path, line_no, why);
    free(text);
    rp_calls_free(c);
    return AT_ERR_INVALID_ARG;
}

/* ---- the section ---- */

typedef struct rp_call_sums {
    int n, below[3], vendor;
    double log_sum, lowest;
} rp_call_sums;

static void rp_sums_add(rp_call_sums *s, const rp_call *call)
{
    static const double edges[3] = {0.5, 0.8, 0.95};
    if (s->n == 0 || call->ratio < s->lowest)
        s->lowest = call->ratio;
    s->n++;
    s->log_sum += log(call->ratio);
    for (int k = 0; k < 3; k++)
        s->below[k] += call->ratio < edges[k];
    s->vendor += call->vendor;
}

static void rp_sums_row(rp_buf *b, const char *name, const char *color, const rp_call_sums *s)
{
    rp_put(b, "<tr><td>");
    if (color)
        rp_printf(b, "<i style=\"display:inline-block;width:10px;height:10px;margin-right:4px;"
                     "background:%s\"></i>", color);
    rp_esc(b, name);
    if (s->n == 0) {
        rp_put(b, "</td><td class=\"n\">0</td><td colspan=\"6\"></td></tr>\n");
        return;
    }
    double geo = exp(s->log_sum / s->n);
    rp_printf(b, "</td><td class=\"n\">%d</td><td class=\"n%s\">%.3fx</td>"
                 "<td class=\"n%s\">%.3fx</td>",
              s->n, geo < 0.9 ? " fail" : "", geo, s->lowest < 0.5 ? " fail" : "", s->lowest);
    for (int k = 0; k < 3; k++)
        rp_printf(b, "<td class=\"n\">%d</td>", s->below[k]);
    rp_printf(b, "<td class=\"n\">%d</td></tr>\n", s->vendor);
}

/* The table by type and all. */
static void rp_calls_table(rp_buf *b, const rp_calls *c)
{
    rp_call_sums by[RP_N_TYPES], all;
    memset(by, 0, sizeof by);
    memset(&all, 0, sizeof all);
    for (int i = 0; i < c->n; i++) {
        rp_sums_add(&by[rp_type_index(c->call[i].type)], &c->call[i]);
        rp_sums_add(&all, &c->call[i]);
    }
    rp_put(b, "<table><tr><th>type</th><th>calls</th><th>geomean</th><th>lowest</th>"
              "<th>&lt;0.5x</th><th>&lt;0.8x</th><th>&lt;0.95x</th>"
              "<th>served by cuBLAS</th></tr>\n");
    for (int t = 0; t < RP_N_TYPES; t++)
        if (by[t].n > 0)
            rp_sums_row(b, rp_call_types[t], rp_call_colors[t], &by[t]);
    rp_sums_row(b, "all", NULL, &all);
    rp_put(b, "</table>\n");
}

#define RP_SC_W 760
#define RP_SC_H 352
#define RP_SC_X0 64
#define RP_SC_X1 740
#define RP_SC_Y0 40
#define RP_SC_Y1 280

/* Every call: its ratio (log) against cuBLAS's time (log), coloured by type; lines at 1x
 * (cuBLAS's speed) and at 0.8x and 0.5x. */
static void rp_calls_scatter(rp_buf *b, const rp_calls *c)
{
    double tmin = c->call[0].cublas_us, tmax = tmin, rmin = c->call[0].ratio, rmax = rmin;
    for (int i = 1; i < c->n; i++) {
        tmin = fmin(tmin, c->call[i].cublas_us);
        tmax = fmax(tmax, c->call[i].cublas_us);
        rmin = fmin(rmin, c->call[i].ratio);
        rmax = fmax(rmax, c->call[i].ratio);
    }
    double lx0 = floor(log10(tmin)), lx1 = ceil(log10(tmax));
    if (lx1 - lx0 < 1)
        lx1 = lx0 + 1;
    double ly0 = fmin(log10(0.25), floor(log10(rmin) * 4) / 4);
    double ly1 = fmax(log10(4.0), ceil(log10(rmax) * 4) / 4);
    rp_scale sx = {lx0, lx1, RP_SC_X0, RP_SC_X1, 1}, sy = {ly0, ly1, RP_SC_Y1, RP_SC_Y0, 1};
    char label[320];
    snprintf(label, sizeof label, "Random calls of %s: ratio to cuBLAS against cuBLAS's time",
             c->label);
    rp_svg_open(b, RP_SC_W, RP_SC_H, label);
    rp_svg_text(b, RP_SC_X0, 18, "start", "title", "each call: cuBLAS's time over ours");
    rp_axis ax = {sx, RP_CI(RP_SC_Y0), RP_CI(RP_SC_Y1), RP_SC_Y1 + 14, 0, "tick"};
    rp_svg_decades_x(b, &ax);
    /* the ratio axis: lines at 0.25, 0.5, 0.8, 1, 2, 4 (within range) */
    static const double marks[] = {0.125, 0.25, 0.5, 0.8, 1.0, 2.0, 4.0, 8.0, 16.0};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        double l = log10(marks[i]);
        if (l < ly0 - 1e-9 || l > ly1 + 1e-9)
            continue;
        double y = rp_scale_at(&sy, marks[i]);
        const char *stroke = marks[i] == 1.0 ? "#111827" : marks[i] == 0.8 || marks[i] == 0.5
                                                               ? "#f59e0b" : RP_GRID;
        rp_svg_line(b, RP_CI(RP_SC_X0), RP_C(y), RP_CI(RP_SC_X1), RP_C(y), stroke,
                    marks[i] == 0.8 || marks[i] == 0.5 ? "stroke-dasharray=\"4 3\"" : NULL);
        char num[32];
        snprintf(num, sizeof num, "%gx", marks[i]);
        rp_svg_text(b, RP_SC_X0 - 6, y + 4, "end", "tick", num);
    }
    rp_svg_text(b, (RP_SC_X0 + RP_SC_X1) / 2.0, RP_SC_Y1 + 32, "middle", "axis",
                "cuBLAS's time per call (us)");
    for (int i = 0; i < c->n; i++) {
        const rp_call *call = &c->call[i];
        char title[192];
        snprintf(title, sizeof title, "%s: %.3fx (cuBLAS %.1f us)%s", call->shape, call->ratio,
                 call->cublas_us, call->vendor ? ", served by cuBLAS" : "");
        rp_svg_circle(b, RP_C(rp_scale_at(&sx, call->cublas_us)),
                      RP_C(rp_scale_at(&sy, call->ratio)), RP_C(call->vendor ? 2.5 : 3.5),
                      rp_call_colors[rp_type_index(call->type)], "fill-opacity=\"0.75\"", title);
    }
    rp_key keys[RP_N_TYPES];
    for (int t = 0; t < RP_N_TYPES; t++)
        keys[t] = (rp_key){rp_call_types[t], rp_call_colors[t], RP_SC_X0 + 70 * t};
    rp_svg_keys(b, keys, RP_N_TYPES, RP_SC_H - 10);
    rp_svg_close(b);
}

void rp_calls_section(rp_buf *b, const rp_calls *files, int n_files)
{
    if (n_files <= 0)
        return;
    rp_put(b, "<h2 id=\"calls\">Random calls against cuBLAS</h2>\n"
              "<p class=\"muted\">bench_calls: GEMM calls of every type, op pair, order and "
              "batch at shapes drawn at random, each timed against cuBLAS in the same process "
              "after a check against float64; the ratio is cuBLAS's time over ours (above 1x "
              "is faster than cuBLAS). Read from the files named; a smaller dot was served by "
              "cuBLAS itself (the vendor candidate).</p>\n");
    for (int f = 0; f < n_files; f++) {
        rp_put(b, "<div class=\"card\"><h3>");
        rp_esc(b, files[f].label);
        rp_printf(b, "</h3>\n");
        rp_calls_table(b, &files[f]);
        rp_calls_scatter(b, &files[f]);
        rp_put(b, "</div>\n");
    }
}
