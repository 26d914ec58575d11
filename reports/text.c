/* text.c: the report's text layer: growable buffer, HTML escaping (the one
 * place that decides what is safe to show) and number/problem formatting. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "text.h"

void rp_putn(rp_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void rp_put(rp_buf *b, const char *s)
{
    rp_putn(b, s, strlen(s));
}

void rp_printf(rp_buf *b, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        rp_putn(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rp_putn(b, big, (size_t)n);
    free(big);
}

/* The entity for c, or NULL if c stands for itself. */
static const char *rp_entity(char c)
{
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return NULL;
    }
}

void rp_esc_max(rp_buf *b, const char *s, size_t max)
{
    if (!s)
        return;
    size_t i = 0;
    for (; s[i] && (max == 0 || i < max); i++) {
        const char *e = rp_entity(s[i]);
        if (e)
            rp_put(b, e);
        else
            rp_putn(b, &s[i], 1);
    }
    if (s[i])
        rp_put(b, "...");
}

void rp_esc(rp_buf *b, const char *s)
{
    rp_esc_max(b, s, 0);
}

void rp_escape_html(const char *s, char *out, size_t len)
{
    if (!out || len == 0)
        return;
    size_t n = strnlen(out, len);
    if (n >= len)
        n = len - 1;
    for (; s && *s; s++) {
        const char *e = rp_entity(*s);
        size_t k = e ? strlen(e) : 1;
        if (n + k >= len)
            break;                     /* never cut an entity in half */
        memcpy(out + n, e ? e : s, k);
        n += k;
    }
    out[n] = '\0';
}

const char *rp_num(char *out, size_t len, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(out, len, "-");
    else if (a >= 1000)
        snprintf(out, len, "%.0f", v);
    else if (a >= 100)
        snprintf(out, len, "%.1f", v);
    else if (a >= 1)
        snprintf(out, len, "%.2f", v);
    else if (a == 0)
        snprintf(out, len, "0");
    else
        snprintf(out, len, "%.3g", v);
    return out;
}

const char *rp_tick(char *out, size_t len, double v)
{
    if (fabs(v) < 1e-12)
        v = 0;
    snprintf(out, len, "%g", v);
    return out;
}

void rp_problem_text(const tpl_problem *p, char *out, size_t len)
{
    tpl_problem_format(p, out, len);
    if (!out[0])
        snprintf(out, len, "-");
}

void rp_problem_named(const tpl_family *fam, const tpl_problem *p, char *out, size_t len)
{
    if (!fam) {
        rp_problem_text(p, out, len);
        return;
    }
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < p->n_dims && i < TPL_MAX_DIMS; i++) {
        const char *name = i < fam->n_dims && fam->dim_names[i] ? fam->dim_names[i] : "d";
        int w = snprintf(out + n, len - n, "%s%s=%lld", i ? ", " : "", name, p->dims[i]);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (!tpl_problem_plain(p) && n < len) {       /* the kind, as the text form writes it */
        tpl_problem kind = *p;
        kind.n_dims = 0;
        tpl_problem_format(&kind, out + n, len - n);
    }
}
